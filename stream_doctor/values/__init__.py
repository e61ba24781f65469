"""The values the stages hand each other: events, problems' facts aside, findings, options, the report
and its timeline, and what a provider's protocol promises.
"""
