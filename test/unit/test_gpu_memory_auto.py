"""--gpu-memory=auto (contract/place_options.AutoMemory,
pipeline/placement_options.parse_gpu_memory): the budget is the profile's free
memory less a margin, 1 GiB or a tenth of the free memory where that is
less, or the margin given as auto-SIZE; and the open cost that
mdc-profile records (profiler/memory.py's arithmetic, no device needed)."""

from __future__ import annotations

import pytest

from mdc.contract.place_options import AUTO_MARGIN_BYTES, AutoMemory
from mdc.pipeline.placement_options import UsageError, parse_gpu_memory
from mdc.profiler import memory

GiB, MiB = 1 << 30, 1 << 20


@pytest.mark.parametrize("text, margin", [("auto", None), ("AUTO", None), (" auto ", None), ("auto-512MiB", 512 * MiB),
                                          ("auto-0", 0), ("Auto-1G", GiB), ("auto-1.5GB", 1_500_000_000)])
def test_auto_and_its_margin_are_read(text, margin):
    parsed = parse_gpu_memory(text)
    assert parsed == AutoMemory(margin, text.strip())


@pytest.mark.parametrize("text, want", [("8GiB", 8 * GiB), ("1000", 1000), (4096, 4096)])
def test_a_size_is_still_a_size(text, want):
    assert parse_gpu_memory(text) == want


@pytest.mark.parametrize("text", ["autox", "auto-", "auto-lots", "auto+1G", "auto 1G", "automatic"])
def test_anything_else_is_one_usage_line(text):
    with pytest.raises(UsageError) as e:
        parse_gpu_memory(text)
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"--gpu-memory={text}: expected auto, or auto-SIZE"), message


def test_the_default_margin_is_a_gib_or_a_tenth_of_what_is_free():
    auto = AutoMemory()
    assert auto.margin(80 * GiB) == AUTO_MARGIN_BYTES == GiB  # llama.cpp --fit's default
    assert auto.budget(80 * GiB) == 79 * GiB
    assert auto.margin(10 * GiB) == GiB  # a tenth is 1 GiB exactly
    assert auto.margin(4 * GiB) == 4 * GiB // 10 and auto.budget(4 * GiB) == 4 * GiB - 4 * GiB // 10
    assert auto.margin(0) == 0 and auto.budget(0) == 0


def test_a_margin_given_is_kept_and_the_budget_never_goes_below_zero():
    assert AutoMemory(512 * MiB).budget(80 * GiB) == 80 * GiB - 512 * MiB
    assert AutoMemory(0).budget(3 * GiB) == 3 * GiB
    assert AutoMemory(2 * GiB).budget(GiB) == 0


def test_the_open_cost_on_a_gpu_is_the_counters_growth_never_below_the_allocators():
    gpu = memory.NvmlCounter(None, None)
    before, after = memory.Reading(80 * GiB, 79 * GiB, GiB), memory.Reading(80 * GiB, 78 * GiB, GiB + 520 * MiB)
    assert memory.open_cost(gpu, before, after, 4 * MiB) == 520 * MiB  # the allocator's bytes are inside
    assert memory.open_cost(gpu, before, before, 4 * MiB) == 4 * MiB  # another process freed some meanwhile


def test_the_open_cost_on_the_host_adds_the_allocators_untouched_block():
    host = memory.HostCounter()
    before, after = memory.Reading(24 * GiB, 20 * GiB, 30 * MiB), memory.Reading(24 * GiB, 20 * GiB, 50 * MiB)
    assert memory.open_cost(host, before, after, 64 * MiB) == 84 * MiB
    assert memory.open_cost(host, after, before, 64 * MiB) == 64 * MiB  # shrank: no growth, not less
    assert memory.open_cost(None, before, after, 64 * MiB) == 64 * MiB  # no counter: the allocator's alone


def test_the_host_counter_reads_this_machine():
    reading = memory.HostCounter().read()
    assert reading.total > reading.free > 0 and reading.used > 0


@pytest.mark.parametrize("path, uuid", [
    ("GPU-6d65736132322e332e36000000000000", "GPU-6d657361-3232-2e33-2e36-000000000000"),  # IREE's Vulkan path
    ("GPU-6D657361-3232-2E33-2E36-000000000000", "GPU-6d657361-3232-2e33-2e36-000000000000"),  # cuda's, dashed
    ("", None), ("0", None), ("GPU-123", None), ("GPU-" + "g" * 32, None)])
def test_a_device_path_names_its_uuid_as_nvml_takes_it(path, uuid):
    assert memory.dashed_uuid(path) == uuid


def test_which_counter_a_device_gets():
    assert isinstance(memory.counter_for("local", "default", ""), memory.HostCounter)
    lavapipe = "llvmpipe (LLVM 15.0.6, 256 bits) (llvmpipe Mesa 22.3.6 (LLVM 15.0.6))"
    assert isinstance(memory.counter_for("vulkan", lavapipe, "GPU-6d65736132322e332e36000000000000"),
                      memory.HostCounter)
    assert memory.counter_for("hip", "AMD Instinct MI300X", "") is None
