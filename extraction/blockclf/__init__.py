"""The SVM block classifier and paragraph denoiser (papers 003 and 004): block and paragraph
features (``features``) and ONNX inference (``classifier``, method ``svm``)."""
