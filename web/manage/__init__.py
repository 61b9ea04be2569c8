"""Managing what is watched: works uploaded, sites added and edited, who is told, discovery started
(blueprints discovery, subscriptions; their pages hang off works and sites). May import fingerprint,
tracker, crawler and web's own modules."""
