"""mdc's Python passes over IREE's stream and HAL IR. See registry.py."""
