# Sourced by scripts/test.sh: makes sure a Vulkan device that runs on the CPU
# (Mesa's lavapipe) is there for the tests that need a device with its own
# memory, installing Debian's packages when it is missing and this is root
# with apt. Exports MDC_VULKAN: "lavapipe" when a Vulkan device answers,
# else the reason there is none; the Vulkan tests read it (test/vulkan.py)
# and report themselves skipped, with their count, when it is a reason.

_lavapipe_probe() {
  # The stock runtime's own view: can it create a Vulkan device?
  python - <<'PY' 2>/dev/null
import iree.runtime as rt
rt.get_driver("vulkan").create_default_device()
print("ok")
PY
}

if [ -n "${MDC_VULKAN:-}" ] && [ "${MDC_VULKAN}" != "lavapipe" ]; then
  : # the caller chose to run without Vulkan: keep the reason given
elif [ "$(_lavapipe_probe)" = "ok" ]; then
  MDC_VULKAN=lavapipe
elif [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "== installing lavapipe (Debian: mesa-vulkan-drivers libvulkan1) for the Vulkan tests"
  if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
         --no-install-recommends mesa-vulkan-drivers libvulkan1; } >/tmp/mdc-lavapipe-install.log 2>&1 \
     && [ "$(_lavapipe_probe)" = "ok" ]; then
    MDC_VULKAN=lavapipe
  else
    MDC_VULKAN="installing mesa-vulkan-drivers and libvulkan1 did not give a Vulkan device (log: /tmp/mdc-lavapipe-install.log)"
  fi
else
  MDC_VULKAN="no Vulkan device, and lavapipe cannot be installed here (needs root and apt-get: apt-get install mesa-vulkan-drivers libvulkan1)"
fi
export MDC_VULKAN
if [ "$MDC_VULKAN" = "lavapipe" ]; then
  echo "== Vulkan: lavapipe answers; the Vulkan tests run"
else
  echo "== WARNING: Vulkan tests will be SKIPPED: $MDC_VULKAN"
fi
