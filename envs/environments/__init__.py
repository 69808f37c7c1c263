"""The Gymnasium env classes: ``ToolUseEnv`` (``base``: the reset/step loop every domain shares,
tool dispatch, history, termination, scoring hooks), action parsing (``parsing``), the text space
(``spaces``), the life-service base (``life``) and one env per domain (``delivery``, ``instore``,
``travel``, ``cross``, ``payments``, ``workspace``); ``registration`` names their ids.

A domain env adds tools, a world builder, a prompt and a task source; it adds no control flow."""
