"""``python -m serving.vllm_plugin DIR``: write the plugin's ``.dist-info`` (its
``vllm.general_plugins`` entry point) into ``DIR``, a folder on ``PYTHONPATH``, for a machine
where the project is not pip-installed (see :func:`serving.vllm_plugin.write_dist_info`)."""

import sys

from serving.vllm_plugin import write_dist_info

if len(sys.argv) != 2:
    raise SystemExit("usage: python -m serving.vllm_plugin DIR  (DIR: a folder on PYTHONPATH)")
print(write_dist_info(sys.argv[1]))
