"""`scheduler`: the command line over the management API (collections, jobs, history), the engine's next
occurrences offline, and `scheduler import` for ARM templates and exported resource lists."""
