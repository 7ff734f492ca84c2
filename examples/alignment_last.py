"""Fig 5.4 + the "Last" conversion on the synthetic speech-like alignment stream (Shalev-Shwartz
2007, Chapter 9). Tables 9.1 (TIMIT) and 9.2 (piano recordings) need data not available offline;
this prints the same measure, the percentage of starts within ε frames, on synthetic utterances.

Run: .venv/bin/python examples/alignment_last.py
"""

from arena.adversaries.alignment_stream import AlignmentStream
from arena.players.structured_self_tuned import StructuredSelfTuned
from arena.structured.alignment import last_conversion

if __name__ == "__main__":
    for n_train in (50, 500):
        out = last_conversion(StructuredSelfTuned(), AlignmentStream(), n_train, 500, seed=0)
        print(n_train, {k: round(v, 1) for k, v in out.items()})
