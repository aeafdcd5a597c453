"""Plans: typed operations in order, each with its reason, built by the builders and the audit
rules, judged by the guards, forecast by the outcome, run only by the executor."""

from app.plans.plan import Plan, Step

__all__ = ["Plan", "Step"]
