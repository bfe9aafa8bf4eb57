"""Resolving the user's deployment once (``resolve``) and deriving the speed model's and memory check's inputs from it
(``requests``); the draft listing every verb reads (``drafts``). The value object is ``tools/deployment.py``."""
