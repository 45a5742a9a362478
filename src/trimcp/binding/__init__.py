"""Typed binding: one strict cattrs converter (camelCase for the MCP vocabulary, Python
names for a user's types), JSON Schema 2020-12 generated from annotations, cached
validators for explicit schemas, readable error paths, and typed tool functions.
"""

from ._constraints import IgnoredMetadataWarning as IgnoredMetadataWarning
from ._constraints import read_metadata as read_metadata
from ._converter import converter as converter
from ._converter import make_converter as make_converter
from ._converter import structure as structure
from ._converter import structure_hook as structure_hook
from ._converter import unstructure as unstructure
from ._docstrings import param_docs as param_docs
from ._errors import format_errors as format_errors
from ._plan import CAMEL_CASE as CAMEL_CASE
from ._plan import FORBID_EXTRA as FORBID_EXTRA
from ._plan import wire_name as wire_name
from ._schema import json_schema_for as json_schema_for
from ._text import text_reader as text_reader
from ._tools import ArgumentsError as ArgumentsError
from ._tools import RunSync as RunSync
from ._tools import ToolBinding as ToolBinding
from ._tools import bind_tool as bind_tool
from ._tools import is_async_callable as is_async_callable
from ._validators import validator_for as validator_for

__all__ = [
    "CAMEL_CASE",
    "FORBID_EXTRA",
    "ArgumentsError",
    "IgnoredMetadataWarning",
    "RunSync",
    "ToolBinding",
    "bind_tool",
    "converter",
    "format_errors",
    "is_async_callable",
    "json_schema_for",
    "make_converter",
    "param_docs",
    "read_metadata",
    "structure",
    "structure_hook",
    "text_reader",
    "unstructure",
    "validator_for",
    "wire_name",
]
