// Importing the package defines <foxden-den>; `controls` then loads the editor module, which a
// bundler must carry (webpack and Vite emit it; with esbuild it is copied, see the README).
import "foxden-sandbox";
