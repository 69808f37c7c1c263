"""The database side of servicegym: typed tables, tools and their deterministic transitions."""

from servicegym.world_state.core import Clock, Entity, History, HistoryEntry, IdCounter, Table, World, haversine_m
from servicegym.world_state.tools import ToolError, ToolGraph, Toolkit, ToolResult, ToolSpec, dependency_graph, tool

__all__ = [
    "Clock", "Entity", "History", "HistoryEntry", "IdCounter", "Table", "World", "haversine_m",
    "ToolError", "ToolGraph", "ToolResult", "ToolSpec", "Toolkit", "dependency_graph", "tool",
]
