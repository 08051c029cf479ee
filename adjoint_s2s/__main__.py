"""python -m adjoint_s2s show-adjoint module:function"""
import sys

from .cli import main

sys.exit(main())
