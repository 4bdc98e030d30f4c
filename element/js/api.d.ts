// Types of foxden/api (dist/api.js): foxden's functions and classes without <foxden-den>; the
// same as foxden.d.ts's but for the element and its global tag-name type.
export * from "./types.js";
