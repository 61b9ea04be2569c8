"""Pictures for the OCR benchmark and tests: chapters drawn as screenshots (render)."""
