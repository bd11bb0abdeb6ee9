package store

const seedExample = `# Memories

## Pattern: Error Handling
- Tags: pattern, error-handling
- Date: 2026-01-26
- Content: Always use try-catch blocks for async operations

## Architecture Decision: Database
- Tags: architecture, database
- Date: 2026-01-25
- Content: Use PostgreSQL for relational data, Redis for caching

## Solution: CI Timeout
- Tags: solution, ci
- Date: 2026-01-24
- Content: Increase CI timeout to 600 seconds for integration tests
`
