"""Extenders: instances that only derive extra state (they never write cmd vars)."""
