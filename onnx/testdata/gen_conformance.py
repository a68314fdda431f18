#!/usr/bin/python3
"""Writes ONNX's node test suite (model.onnx plus test_data_set_*/*.pb per
case) with the generators that Debian's python3-onnx ships:

    /usr/bin/python3 gen_conformance.py OUTDIR

onnx 1.12 still uses the aliases np.float, np.int, np.bool and np.object
that numpy 1.24 removed; they are restored (as the builtins they stood
for) before the generators are imported. Cases land in OUTDIR/node.
"""
import sys
import warnings

import numpy as np

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for alias, builtin in (("float", float), ("int", int), ("bool", bool), ("object", object)):
        try:
            getattr(np, alias)
        except AttributeError:
            setattr(np, alias, builtin)

from onnx.backend.test import cmd_tools  # noqa: E402  (needs the aliases)

if len(sys.argv) != 2:
    sys.exit("usage: gen_conformance.py OUTDIR")
sys.argv = ["cmd_tools", "generate-data", "-o", sys.argv[1]]
cmd_tools.main()
