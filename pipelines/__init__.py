"""Item pipelines: thin adapters from Scrapy items to the extraction library."""
