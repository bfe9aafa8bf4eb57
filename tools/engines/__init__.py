"""Serving engines: one module per engine behind one interface (``base.EngineSpec``), looked up by name
(``lookup.engine``), registered through ``registry.register`` (built-in and plugin engines alike)."""
