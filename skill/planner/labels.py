"""Display names of the strategies, as the answer and its rationale print them."""

LABEL = {"draft_model": "Draft model", "eagle": "EAGLE", "eagle2": "EAGLE-2", "eagle3": "EAGLE-3",
         "medusa": "Medusa", "mtp": "MTP", "lookahead": "Lookahead", "ngram": "N-gram (prompt lookup)",
         "suffix": "Suffix decoding", "dflash": "DFlash (block-diffusion drafter)",
         "dspark": "DSpark (block drafter + Markov head)",
         "peagle": "P-EAGLE (parallel-drafting EAGLE-3)", "pard": "PARD (parallel draft model)",
         "none": "No speculative decoding"}
