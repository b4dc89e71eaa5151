// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      ".tmp/**",
      "**/*.d.ts",
      "stories/browser-offline/dist/**",
      "docs/api/**",
      "spec/fixtures/**/*.mjs",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  {
    // machines/ hold pure definitions: no I/O, no clock, no randomness (DESIGN.md).
    files: ["machines/**/*.ts"],
    rules: {
      "no-restricted-globals": ["error", "Date", "setTimeout", "setInterval", "fetch", "crypto", "performance"],
      "no-restricted-properties": ["error", { object: "Math", property: "random" }],
      "no-restricted-imports": ["error", { patterns: ["node:*", "**/actors/*", "**/stores/*", "**/adapters/*"] }],
    },
  },
  {
    // Browser-facing code never imports node:*; only adapters/fs, the CLI, specs, stories and benches may.
    files: [
      "index.ts",
      "actors/**/*.ts",
      "stores/**/*.ts",
      "adapters/indexeddb/**/*.ts",
      "adapters/scripted/**/*.ts",
      "adapters/ai-sdk/**/*.ts",
    ],
    rules: { "no-restricted-imports": ["error", { patterns: ["node:*"] }] },
  },
);
