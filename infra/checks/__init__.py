"""Custom checkov checks for infra/*.bicep (loaded with --external-checks-dir infra/checks).

checkov imports every ``.py`` file in this folder; a file that fails to import is only
logged, so infra/check.sh also requires every ID below to appear in the passed results.
"""
