"""Copies stdin to stdout; exits 1 if the text holds a Python traceback."""
import sys

text = sys.stdin.read()
sys.stdout.write(text)
if "Traceback (most recent call last)" in text:
    sys.stderr.write("no_traceback.py: a Python traceback reached the user\n")
    sys.exit(1)
