"""The Scrapy project: settings, items, site list, spiders, middlewares and commands."""
