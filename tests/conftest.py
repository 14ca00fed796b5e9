from __future__ import annotations

from scrapy.utils.reactor import install_reactor

# The project runs on Twisted's asyncio reactor (scrapy-playwright needs it); components
# built in unit tests check for it.
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
