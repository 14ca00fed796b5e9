"""The page as a document: bytes to text (``encoding``), parsing (``html``), visible text
(``text``), language (``lang``), clean-up before extraction (``preprocess``), per-element
statistics (``stats``), blocks and paragraphs (``blocks``), tokenisers (``tokens``)."""
