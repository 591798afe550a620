"""App settings, read once from the environment (Functions app settings or local.settings.json Values).

- app.py: `Settings`, every setting as one value (`Settings.from_environment`), and the defaults of its knobs.
- storage.py: how the app reaches its storage accounts (`StorageSettings`, the data accounts, Azurite's).
- auth.py: who may call the API (`AuthSettings`, `host_checks_keys`).
- clock_offset.py: `clock_offset`, the local host's clock offset (SCHEDULER_CLOCK_OFFSET_SECONDS), refused elsewhere.
- reading.py: `ConfigurationError`, what every reader raises for a setting missing or malformed, naming it.

The names most of the app imports are here too; import any other from its module.
"""

from .app import Settings
from .auth import AuthSettings
from .reading import ConfigurationError
from .storage import StorageSettings

__all__ = ["AuthSettings", "ConfigurationError", "Settings", "StorageSettings"]
