"""The self-hosted Python runtime of the code cells (Pyodide + NumPy + attention_core), one module per job:
verify (manifest, hashes) · wheels (NumPy, attention_core, packs) · precompile (bytecode) · snapshot (heap
snapshot) · wrappers (each asset's one shipped form: scripts read over http and file://) · bundle (python-runtime.js) · prepare (all of it into assets/python/)
· completions (the editor's NumPy autocomplete data).  Import from here, not from the modules."""

from .bundle import RUNTIME_JS_NAME, bundle_python_runtime
from .cell_env import cell_runtime
from .completions import completions_script
from .prepare import RuntimeInfo, prepare_python_runtime
from .snapshot import SNAPSHOT_ENV, SNAPSHOT_PAGE, SNAPSHOT_PREFIX, pack_snapshot, unpack_snapshot
from .verify import RuntimeAssetError, load_manifest
from .wheels import build_wheel_bytes, ensure_numpy_wheel, pack_name, project_version, read_pack, wheel_pack
from .wrappers import WRAPPER_CHUNK

__all__ = [
    "RUNTIME_JS_NAME",
    "SNAPSHOT_ENV",
    "SNAPSHOT_PAGE",
    "SNAPSHOT_PREFIX",
    "WRAPPER_CHUNK",
    "RuntimeAssetError",
    "RuntimeInfo",
    "build_wheel_bytes",
    "bundle_python_runtime",
    "cell_runtime",
    "completions_script",
    "ensure_numpy_wheel",
    "load_manifest",
    "pack_name",
    "pack_snapshot",
    "prepare_python_runtime",
    "project_version",
    "read_pack",
    "unpack_snapshot",
    "wheel_pack",
]
