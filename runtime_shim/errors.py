"""The one exception type for user mistakes."""


class ShimError(Exception):
    """A mistake the user can fix: a wrong device, function, input or file.

    `mdc-run` prints it as one line, `mdc-run: error: <message>`, and exits
    with status 2. Failures inside the runtime are not ShimErrors.
    """


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
