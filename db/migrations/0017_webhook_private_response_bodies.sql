-- Until this release, test-mode webhooks could reach private, loopback and link-local addresses, and
-- the delivery log kept the first kilobyte of what they answered: a cloud metadata service or an
-- internal admin page could be read through it. Deliveries no longer keep anything a private address
-- answers (docs/webhooks.md, "URL rules"). This clears what test deliveries kept before: which address
-- a past attempt reached is not recorded, so every test-mode body goes (the status codes stay). Live
-- endpoints always had to resolve to public addresses, so their logs stay as they are.
UPDATE webhook_deliveries d SET response_body = NULL
FROM webhook_endpoints e
WHERE d.endpoint_id = e.id AND e.environment = 'test' AND d.response_body IS NOT NULL;
