"""All logic of the scheduler: `function_app.py` only translates Functions bindings into calls here."""
