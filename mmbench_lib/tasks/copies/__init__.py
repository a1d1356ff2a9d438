"""Readers shared by the tasks' copies of their data; nothing here is keyed by a benchmark's name.

- ``tables``: parquet / VLMEvalKit TSV / hub-cache reading, bounded (regular files only, cells of a
  bounded size, list cells matched as data), and the cache folder keyed by the source's stamp;
- ``seed``: SEED-family hub parquet and TSV copies written once as the official layout, described by
  the task's ``SeedShape``; the official v1 frame folders;
- ``mmmu``: merged hub parquet, cached hub ids and TSV copies as per-config rows, described by the
  task's ``RowsShape``.

Each task declares the layouts it reads (``Task.layouts``) and probes a path itself (``Task.probe``),
using these readers; ``mmbench run`` asks the task before the run folder exists.
"""
