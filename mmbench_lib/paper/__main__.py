"""``python -m mmbench_lib.paper gallery RUN... --dest DIR``: copy the figure notebooks' PNGs into a gallery."""
from mmbench_lib.paper import main

main()
