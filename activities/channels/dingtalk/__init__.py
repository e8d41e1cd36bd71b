"""DingTalk (钉钉), outbound: `delivery` (texts, Markdown, interactive cards through the official
OpenAPI SDK) and `cards` (what an approval card's template variables say)."""
