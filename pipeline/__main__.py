import sys

from .cli import compile_main

sys.exit(compile_main())
