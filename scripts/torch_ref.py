#!/usr/bin/python3
"""PyTorch reference implementation of the s2s model (docs/model.md).

The model here is the contract the C code is checked against: same equations,
same tensor names, same file format, for every attention variant and bridge of
docs/model.md (Bahdanau; luong-dot, luong-general, luong-concat, scaled-dot and
multihead on the Luong path, with global, local-m or local-p windows and optional
input feeding; linear, zero or attn-pool bridges). Subcommands:

  init        write a randomly initialised model file
  make-batch  write a random batch (src, src_len, tgt_in, tgt_out) for parity tests
  parity      forward + loss + backward of one batch; writes loss, logits, gradients
  train       train on an `s2s prepare` directory; writes the model and test hypotheses
  selftest    internal consistency checks (gradients, padding, windows, file round
              trip, an independent per-sentence forward), for every variant

Run with /usr/bin/python3 (needs torch). Model files are read and written with
scripts/safetensors_io.py.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s2sref.model import *  # noqa: E402,F401,F403  (the names users of this module import)
from s2sref.io import *  # noqa: E402,F401,F403
from s2sref.train import *  # noqa: E402,F401,F403
from s2sref.selftest import *  # noqa: E402,F401,F403
from s2sref.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
