"""Page type, article / list / other (paper 000): the DOM/URL features (``features``), the ONNX
models and their fusion with the screenshot CNN (``models``), and the DOM rule kept as the
report's baseline (``rule``)."""
