"""The lanes of a module's pipelined calls (Function.map, pipelined.py):
VM contexts of their own, made on first use and kept, one map holding
them at a time, each lane's thread knowing its lane, and the calls
running in them counted so that closing the module waits for them.
"""

from __future__ import annotations

import functools
import threading
from typing import Callable

import iree.runtime as rt

from .errors import ShimError


class Lanes:
    """``new_context()`` makes a lane's VM context (its own globals; the
    program's initialisers run in it); ``path`` names the module in errors."""

    def __init__(self, new_context: Callable[[], rt.VmContext], path: str):
        self._new_context = new_context
        self._path = path
        self.contexts: list[rt.VmContext] = []
        self._thread = threading.local()  # .index: which lane this thread runs in
        self._held = threading.Lock()  # whether a map holds the lanes
        self._calls = 0  # calls running in lanes now
        self._calls_done = threading.Condition()
        self._closing = False

    def acquire(self, depth: int) -> list:
        """Holds ``depth`` lanes for one map (ShimError if another map holds
        them) and returns the initializer that binds a thread to each."""
        if not self._held.acquire(blocking=False):
            raise ShimError(f"another map of {self._path} is running; its lanes are taken until it ends")
        try:
            while len(self.contexts) < depth:
                self.contexts.append(self._new_context())
        except BaseException:
            self._held.release()
            raise
        # The threads hold a lane's index, never its context, so that close()
        # releases every context even while a map is paused.
        return [functools.partial(setattr, self._thread, "index", k) for k in range(depth)]

    def release(self) -> None:
        self._held.release()

    def call(self, function: Callable, args: tuple):
        """``function(*args)`` on a lane's thread, counted, so that close()
        waits for it rather than pulling the runtime from under it."""
        with self._calls_done:
            if self._closing:
                raise ShimError(f"module {self._path} is closed")
            self._calls += 1
        try:
            return function(*args)
        finally:
            with self._calls_done:
                self._calls -= 1
                self._calls_done.notify_all()

    def context(self, main: rt.VmContext) -> rt.VmContext:
        """The VM context a call on this thread runs in: its lane's, or
        ``main`` outside the lanes."""
        lane = getattr(self._thread, "index", None)
        if lane is None:
            return main
        try:
            return self.contexts[lane]
        except IndexError:
            raise ShimError(f"module {self._path} is closed") from None

    def stop(self) -> None:
        """Wait for the calls running in lanes; later ones raise ShimError."""
        with self._calls_done:
            self._closing = True
            while self._calls:
                self._calls_done.wait()

    def close(self) -> None:
        """Drop the lanes' contexts (after ``stop``)."""
        self.contexts = []
