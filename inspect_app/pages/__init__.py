"""Pages that gather several domains: the permit page and its "what to do now", My day, the permit holder's home.

A page asks each domain for its part (`section(permit)` in the domain's views, its services' queries) and
puts the parts together; no domain imports a page (docs/architecture.md).
"""
