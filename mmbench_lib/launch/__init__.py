"""Sharded runs on an existing engine (submitit): ``mmbench run NB -f P --shards N --launcher local|slurm``
or :func:`mmbench_lib.launch.launcher.launch_shards` from Python. Kept free of imports so that the CLI's
``--help`` stays fast; import the submodules."""
