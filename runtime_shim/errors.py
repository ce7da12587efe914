"""The exception types for user mistakes: ShimError, and its subclass
ShimTypeError for a call given the wrong arguments."""


class ShimError(ValueError):
    """A mistake the user can fix: a wrong device, function, input or file,
    or a module used after ``close()``.

    A ValueError, so ``except ValueError`` catches it as it catches numpy's
    and the builtins' complaints about a bad value. `mdc-run` prints it as
    one line, `mdc-run: error: <message>`, and exits with status 2.
    Failures inside the runtime are not ShimErrors.
    """


class ShimTypeError(ShimError, TypeError):
    """A call given the wrong number of arguments or a keyword the function
    does not take: a TypeError too, as Python raises for a plain function."""


def short(exc: BaseException, limit: int = 400) -> str:
    """An IREE status message reduced to one readable line.

    IREE messages can embed whole target attributes (kilobytes of CPU
    features) and several lines of notes; users need the first clause.
    """
    text = " ".join(str(exc).split())
    for noise in ("#hal.device.target<", "#hal.executable.target<"):
        cut = text.find(noise)
        if cut != -1:
            text = text[:cut] + noise + "...>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
