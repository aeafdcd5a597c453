"""Wizard plan builders: pure functions (Machine + parameters → Plan). Nothing here runs anything.

Each raises ``app.plans.geometry.PlanError`` with a message for the user when the inputs cannot
make a sensible plan (unknown array, a member that is not in the array, a level without stripes).
"""

from app.plans.geometry import PlanError

__all__ = ["PlanError"]
