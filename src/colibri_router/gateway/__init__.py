"""The team server as a gateway: per-member policy (``COLIBRI_HTTP_POLICY``) on ``serve --http``.

policy.py   the policy file's format: [defaults] and [members.NAME], each rule checked
loader.py   the file re-read when it changes; a bad file keeps the last good policy
enforce.py  the member a call is made for, and the checks below the shell (models, cost, tpm,
            router_models)
budgets.py  a member's daily_usd and monthly_usd as the store's per-caller budgets
shell.py    the checks at the MCP shell (tools, files, rpm) and tools/list
limiter.py  rpm and tpm in the store (every replica), or this process without one
errors.py   NOT_ALLOWED and POLICY_RATE_LIMITED
"""
