"""Project commands (scrapy COMMANDS_MODULE)."""
