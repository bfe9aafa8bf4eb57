"""A tiny real GGUF file, written by llama.cpp's own Python writer (PyPI ``gguf``, the ``measure`` extra).

Its header says what a converted Llama-3.1-8B-Instruct Q4_K_M says (``general.name``, ``general.basename``,
``general.size_label``, ``general.finetune``, ``general.file_type``); one 4x8 tensor stands in for the weights, so the
file is a few hundred bytes. The picker reads only the header (tools/hub/gguf.py).
"""

from __future__ import annotations

from pathlib import Path


def write_tiny_gguf(path: Path, *, name: str = "Meta-Llama-3.1-8B-Instruct", basename: str = "Meta-Llama-3.1",
                    size_label: str = "8B", finetune: str = "Instruct", file_type: str = "MOSTLY_Q4_K_M") -> Path:
    """Write a GGUF v3 file with that header at ``path`` and return it."""
    import numpy as np
    from gguf import GGUFWriter, LlamaFileType

    writer = GGUFWriter(str(path), "llama")
    writer.add_name(name)
    writer.add_basename(basename)
    writer.add_size_label(size_label)
    writer.add_finetune(finetune)
    writer.add_file_type(int(getattr(LlamaFileType, file_type)))
    writer.add_block_count(2)
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
