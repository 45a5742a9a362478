"""Typed binding: one strict cattrs converter (camelCase on the wire), JSON Schema 2020-12
generated from annotations, cached validators for explicit schemas, readable error paths,
and typed tool functions.
"""

from ._converter import converter as converter
from ._converter import make_converter as make_converter
from ._converter import structure as structure
from ._converter import unstructure as unstructure
from ._errors import format_errors as format_errors
from ._plan import FORBID_EXTRA as FORBID_EXTRA
from ._plan import wire_name as wire_name
from ._schema import json_schema_for as json_schema_for
from ._tools import ArgumentsError as ArgumentsError
from ._tools import ToolBinding as ToolBinding
from ._tools import bind_tool as bind_tool
from ._validators import validator_for as validator_for

__all__ = [
    "FORBID_EXTRA",
    "ArgumentsError",
    "ToolBinding",
    "bind_tool",
    "converter",
    "format_errors",
    "json_schema_for",
    "make_converter",
    "structure",
    "unstructure",
    "validator_for",
    "wire_name",
]
