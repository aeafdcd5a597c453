"""The alignment and tuning audit: findings over a Machine plus a few extra reads (AuditInputs)."""

from app.rules.engine import audit
from app.rules.finding import SEVERITIES, Finding
from app.rules.inputs import AuditInputs, gather

__all__ = ["SEVERITIES", "AuditInputs", "Finding", "audit", "gather"]
