"""Tests of the keyward package: `cd sdks/python && /usr/bin/python3 -m unittest discover`.

They test the installed `keyward` when one is importable (ci.sh puts the built wheel first on
PYTHONPATH), else the sources in ../src.
"""

import os
import sys

try:
    import keyward  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
