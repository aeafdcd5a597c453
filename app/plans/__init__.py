"""Plans: ordered argv steps with a reason each, built by wizards and rules, run only by the executor."""

from app.plans.plan import Plan, Step

__all__ = ["Plan", "Step"]
