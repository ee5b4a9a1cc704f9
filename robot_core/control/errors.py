"""The one exception type of the control layer.

Every refusal (illegal lifecycle transition, interface conflict, bad parameter,
invalid command) raises ControlError with a message that names the controller,
interface or file at fault, so the node adapter can answer ``ok=false`` and log
the message verbatim.
"""

from __future__ import annotations


class ControlError(RuntimeError):
    """A refused control request; the message says who and why."""
