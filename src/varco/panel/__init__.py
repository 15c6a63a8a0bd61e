"""The control panel (§1): server-rendered Jinja2 pages over the same services as the API."""
